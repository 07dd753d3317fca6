import { useEffect, useState } from 'preact/hooks';
import { api } from './api.js';

const LABELS: Record<string, string> = {
  ok: 'Answer 200',
  fail: 'Fail with 500',
  hang: 'Hang (no answer)',
  'wrong-secret': 'Check a wrong secret (401)',
};

/** The reference app's sample receiver switches (absent when the dashboard runs elsewhere). */
export function ReceiverPanel() {
  const [state, setState] = useState<{ url: string; mode: string; modes: string[] } | null>(null);
  useEffect(() => {
    api.receiver().then(setState, () => setState(null));
  }, []);
  if (!state) return null;
  return (
    <section class="receiver" aria-labelledby="receiver-title">
      <h2 id="receiver-title">Sample receiver</h2>
      <p>
        <code>{state.url}</code>
      </p>
      <fieldset>
        <legend>Behaviour</legend>
        {state.modes.map((mode) => (
          <label key={mode} class="check">
            <input
              type="radio"
              name="receiver-mode"
              value={mode}
              checked={state.mode === mode}
              onChange={() => api.setReceiverMode(mode).then(() => setState({ ...state, mode }))}
            />{' '}
            {LABELS[mode] ?? mode}
          </label>
        ))}
      </fieldset>
    </section>
  );
}
