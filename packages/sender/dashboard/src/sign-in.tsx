import { useState } from 'preact/hooks';
import { api } from './api.js';

/** Exchanges the API key for a session cookie; the key is not kept anywhere in the browser. */
export function SignIn({ onSignedIn }: { onSignedIn: (account: { id: string; name: string }) => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const { account } = await api.signIn(key.trim());
      setKey('');
      onSignedIn(account);
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="sign-in">
      <h1>linkhooks</h1>
      <form onSubmit={submit} aria-label="Sign in">
        <label for="api-key">API key</label>
        <input
          id="api-key"
          name="api-key"
          type="password"
          autoComplete="off"
          placeholder="lhk_…"
          value={key}
          onInput={(e) => setKey((e.target as HTMLInputElement).value)}
          required
        />
        <button type="submit" disabled={busy}>
          Sign in
        </button>
        {error && (
          <p role="alert" class="error">
            {error}
          </p>
        )}
      </form>
    </main>
  );
}
