import type { RestRoute } from '../route-table.js';

export const verificationRoutes: readonly RestRoute[] = [
  {
    method: 'GET',
    path: '/v1/stats/verifications',
    operation: 'VerificationStats',
    query: { from: 'from', to: 'to' },
    status: 200,
    summary: 'Verification statistics',
    description:
      'Verifications started in a range (at most 400 days; the last 7 days by default), approved and expired, with the conversion (approved of started) by country of the number',
  },
  {
    method: 'POST',
    path: '/v1/verifications',
    operation: 'StartVerification',
    body: 'input',
    status: 201,
    summary: 'Start a verification',
    description:
      'Send a one-time code to a number (code_length 4..10, ttl 60..3600 s); while one of that number is pending, a resend (after 30 s, doubling, five codes at most); 429 rate_limited past five starts per number an hour or ten a day',
  },
  {
    method: 'POST',
    path: '/v1/verifications/:verification/check',
    operation: 'CheckVerification',
    params: { verification: 'id' },
    body: 'input',
    status: 200,
    summary: 'Check a code',
    description:
      'Check the code the user entered: approved once; denied, expired, or max_attempts_reached after five checks',
  },
  {
    method: 'GET',
    path: '/v1/verifications/:verification',
    operation: 'Verification',
    params: { verification: 'id' },
    status: 200,
    summary: 'Read a verification',
    description: 'Read one verification: its status, checks and sends, never its code',
  },
];
