import { useEffect, useState } from 'preact/hooks';

const SHOWN_MS = 2000;

/** Copies `text` to the clipboard and says so beside the button, or says to copy it by hand. */
export function CopyButton({ text, what }: { text: string; what: string }) {
  const [result, setResult] = useState<'copied' | 'failed' | null>(null);
  useEffect(() => {
    if (!result) return;
    const timer = setTimeout(() => setResult(null), SHOWN_MS);
    return () => clearTimeout(timer);
  }, [result]);
  const copy = () =>
    navigator.clipboard.writeText(text).then(
      () => setResult('copied'),
      () => setResult('failed'),
    );
  return (
    <span class="copy">
      <button type="button" class="copy-button" aria-label={`Copy ${what}`} onClick={copy}>
        Copy
      </button>
      <span role="status" class={`copy-result ${result ?? ''}`}>
        {result === 'copied' ? 'Copied' : result === 'failed' ? 'Select it and copy by hand' : ''}
      </span>
    </span>
  );
}
