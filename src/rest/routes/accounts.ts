import type { RestRoute } from '../route-table.js';

export const accountRoutes: readonly RestRoute[] = [
  {
    method: 'POST',
    path: '/v1/auth/login',
    operation: 'Login',
    body: 'input',
    status: 200,
    public: true,
    summary: 'Log in with e-mail and password and receive a bearer token valid for 24 hours',
  },
  {
    method: 'GET',
    path: '/v1/settings',
    operation: 'Settings',
    status: 200,
    summary: 'Read the account settings',
  },
  {
    method: 'PATCH',
    path: '/v1/settings',
    operation: 'UpdateSettings',
    body: 'input',
    status: 200,
    summary: 'Change the time zone or the default sender',
  },
];
