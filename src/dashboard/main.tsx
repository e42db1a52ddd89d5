import 'uplot/dist/uPlot.min.css';
import './dashboard.css';
import { render } from 'preact';
import { useCallback, useState } from 'preact/hooks';
import { Dashboard } from './dashboard';
import { SignIn } from './sign-in';

const TOKEN_KEY = 'tern.dashboard.token';

/** The page: signed in (a token kept for this tab only) or the sign-in forms. */
function App() {
  const [token, setToken] = useState(() => sessionStorage.getItem(TOKEN_KEY));
  const [problem, setProblem] = useState<string | null>(null);
  const signIn = useCallback((value: string) => {
    sessionStorage.setItem(TOKEN_KEY, value);
    setProblem(null);
    setToken(value);
  }, []);
  const signOut = useCallback((reason?: string) => {
    sessionStorage.removeItem(TOKEN_KEY);
    setProblem(reason ?? null);
    setToken(null);
  }, []);
  if (!token)
    return (
      <>
        {problem && (
          <p role="alert" class="problem">
            {problem}
          </p>
        )}
        <SignIn onToken={signIn} />
      </>
    );
  return <Dashboard token={token} onSignOut={signOut} />;
}

const root = document.getElementById('app');
if (root) {
  root.textContent = '';
  render(<App />, root);
}
