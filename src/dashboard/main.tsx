import 'uplot/dist/uPlot.min.css';
import './dashboard.css';
import { render } from 'preact';
import { useCallback, useState } from 'preact/hooks';
import { Dashboard } from './dashboard';
import { SignIn, type SignInForm, type SignInProblem } from './sign-in';

const TOKEN_KEY = 'tern.dashboard.token';
const FORM_KEY = 'tern.dashboard.form';

/** The page: signed in (a token kept for this tab only) or the sign-in forms. */
function App() {
  const [token, setToken] = useState(() => sessionStorage.getItem(TOKEN_KEY));
  const [refused, setRefused] = useState<SignInProblem | null>(null);
  const signIn = useCallback((value: string, form: SignInForm) => {
    sessionStorage.setItem(TOKEN_KEY, value);
    sessionStorage.setItem(FORM_KEY, form);
    setRefused(null);
    setToken(value);
  }, []);
  const signOut = useCallback((reason?: string) => {
    // A refused API key belongs under the key's form; a login token's end under the e-mail's.
    const form: SignInForm = sessionStorage.getItem(FORM_KEY) === 'key' ? 'key' : 'password';
    sessionStorage.removeItem(TOKEN_KEY);
    sessionStorage.removeItem(FORM_KEY);
    setRefused(reason ? { form, text: reason } : null);
    setToken(null);
  }, []);
  if (!token) return <SignIn onToken={signIn} refused={refused} />;
  return <Dashboard token={token} onSignOut={signOut} />;
}

const root = document.getElementById('app');
if (root) {
  root.textContent = '';
  render(<App />, root);
}
