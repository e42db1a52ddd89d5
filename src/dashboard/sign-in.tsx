import { useState } from 'preact/hooks';
import { graphql } from './api';
import { LOGIN } from './queries';

interface LoginAnswer {
  login: { __typename: string; token?: string; message?: string };
}

/** Sign-in with e-mail and password (and a two-factor code when the account asks), or an API key. */
export function SignIn({ onToken }: { onToken: (token: string) => void }) {
  const [problem, setProblem] = useState<string | null>(null);
  const [askCode, setAskCode] = useState(false);

  const withPassword = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const input = {
      email: String(form.get('email')),
      password: String(form.get('password')),
      ...(form.get('otp') ? { otp: String(form.get('otp')) } : {}),
    };
    try {
      const { login } = await graphql<LoginAnswer>(null, LOGIN, { input });
      if (login.token) return onToken(login.token);
      if (login.__typename === 'OtpRequiredError') setAskCode(true);
      setProblem(login.message ?? 'Sign-in refused');
    } catch (error) {
      setProblem(String((error as Error).message));
    }
  };

  const withKey = (event: Event) => {
    event.preventDefault();
    const key = String(new FormData(event.currentTarget as HTMLFormElement).get('key')).trim();
    if (key) onToken(key);
  };

  return (
    <main class="sign-in">
      <h1>Tern dashboard</h1>
      <form onSubmit={withPassword} aria-labelledby="with-password">
        <h2 id="with-password">Sign in with your e-mail</h2>
        <label>
          E-mail
          <input name="email" type="email" autocomplete="username" required />
        </label>
        <label>
          Password
          <input name="password" type="password" autocomplete="current-password" required />
        </label>
        {askCode && (
          <label>
            Two-factor code
            <input name="otp" inputMode="numeric" autocomplete="one-time-code" required />
          </label>
        )}
        <button type="submit">Sign in</button>
      </form>
      <form onSubmit={withKey} aria-labelledby="with-key">
        <h2 id="with-key">Or with an API key</h2>
        <label>
          API key
          <input name="key" type="password" autocomplete="off" required />
        </label>
        <button type="submit">Use this key</button>
      </form>
      {problem && (
        <p role="alert" class="problem">
          {problem}
        </p>
      )}
    </main>
  );
}
