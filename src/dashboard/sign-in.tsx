import { useState } from 'preact/hooks';
import { graphql } from './api';
import { LOGIN } from './queries';

/** The two ways in: a problem is shown under the form it came from. */
export type SignInForm = 'password' | 'key';
export interface SignInProblem {
  form: SignInForm;
  text: string;
}

function Problem({ problem, form }: { problem: SignInProblem | null; form: SignInForm }) {
  if (problem?.form !== form) return null;
  return (
    <p role="alert" class="problem">
      {problem.text}
    </p>
  );
}

interface SignInProps {
  onToken: (token: string, form: SignInForm) => void;
  /** Why the last token was refused, from the form it came from. */
  refused: SignInProblem | null;
}

/** Sign-in with e-mail and password (and a two-factor code when the account asks), or an API key. */
export function SignIn({ onToken, refused }: SignInProps) {
  const [problem, setProblem] = useState<SignInProblem | null>(refused);
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
      const { login } = await graphql(null, LOGIN, { input });
      if (login.__typename === 'Token') return onToken(login.token, 'password');
      if (login.__typename === 'OtpRequiredError') setAskCode(true);
      setProblem({ form: 'password', text: login.message });
    } catch (error) {
      setProblem({ form: 'password', text: String((error as Error).message) });
    }
  };

  const withKey = (event: Event) => {
    event.preventDefault();
    const key = String(new FormData(event.currentTarget as HTMLFormElement).get('key')).trim();
    if (key) onToken(key, 'key');
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
        <Problem problem={problem} form="password" />
      </form>
      <form onSubmit={withKey} aria-labelledby="with-key">
        <h2 id="with-key">Or with an API key</h2>
        <label>
          API key
          <input name="key" type="password" autocomplete="off" required />
        </label>
        <button type="submit">Use this key</button>
        <Problem problem={problem} form="key" />
      </form>
    </main>
  );
}
