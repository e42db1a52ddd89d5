import type { RestRoute } from '../route-table.js';

export const accountRoutes: readonly RestRoute[] = [
  {
    method: 'POST',
    path: '/v1/auth/login',
    operation: 'Login',
    body: 'input',
    status: 200,
    public: true,
    summary: 'Log in',
    description: 'Log in with e-mail and password and receive a bearer token valid for 24 hours',
  },
  {
    method: 'GET',
    path: '/v1/settings',
    operation: 'Settings',
    status: 200,
    summary: 'Read the settings',
    description:
      'Read the account settings, with the limits the operator set (`limits.timezone`: the zone whose days and months the quotas count, which the account’s own `timezone` does not move) and the usage of them',
  },
  {
    method: 'PATCH',
    path: '/v1/settings',
    operation: 'UpdateSettings',
    body: 'input',
    status: 200,
    summary: 'Change the settings',
    description: 'Change the time zone or the default sender',
  },
  {
    method: 'POST',
    path: '/v1/settings/two-factor',
    operation: 'SetUpTwoFactor',
    loginTokenOnly: true,
    status: 200,
    summary: 'Set up two-factor login',
    description:
      'Set up two-factor login: a new TOTP secret and its otpauth:// URL, not in force until confirmed. Needs a login token (403 forbidden with an API key)',
  },
  {
    method: 'POST',
    path: '/v1/settings/two-factor/confirm',
    operation: 'ConfirmTwoFactor',
    loginTokenOnly: true,
    body: 'input',
    status: 200,
    summary: 'Turn two-factor login on',
    description:
      'Turn two-factor login on with a code of the new secret ({ code }); answers the settings and 10 single-use recovery codes, shown only here. Needs a login token',
  },
  {
    method: 'DELETE',
    path: '/v1/settings/two-factor',
    operation: 'DisableTwoFactor',
    loginTokenOnly: true,
    body: 'input',
    status: 200,
    summary: 'Turn two-factor login off',
    description:
      'Turn two-factor login off with a code of the authenticator app or a recovery code ({ code }). Needs a login token',
  },
];
