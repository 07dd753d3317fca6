import { useState } from 'preact/hooks';
import { api } from './api.js';
import { CopyButton } from './copy-button.js';

/** The grace a rotation may give, as the API takes it (seconds): at most 7 days. */
const GRACES = [
  { seconds: 0, label: 'none' },
  { seconds: 60 * 60, label: '1 hour' },
  { seconds: 24 * 60 * 60, label: '24 hours' },
  { seconds: 7 * 24 * 60 * 60, label: '7 days' },
];

/**
 * Show the secret, and rotate it with a grace period during which the old one keeps signing
 * X-Service-Signature, so receivers can deploy the new one before it takes over.
 */
export function SecretActions({
  endpointId,
  act,
}: {
  endpointId: string;
  act: (work: () => Promise<string | undefined>) => Promise<void>;
}) {
  const [secret, setSecret] = useState<string | null>(null);
  const [grace, setGrace] = useState(24 * 60 * 60);
  const selectId = `grace-${endpointId}`;
  return (
    <>
      <button type="button" onClick={() => act(async () => void setSecret(await api.secret(endpointId)))}>
        Show secret
      </button>
      <label for={selectId}>Grace period</label>
      <select
        id={selectId}
        value={grace}
        onChange={(e) => setGrace(Number((e.target as HTMLSelectElement).value))}
      >
        {GRACES.map((g) => (
          <option key={g.seconds} value={g.seconds}>
            {g.label}
          </option>
        ))}
      </select>
      <button
        type="button"
        onClick={() => {
          // With no grace the old secret stops verifying at once, as Delete ends the log: asked first.
          if (
            grace === 0 &&
            !confirm(
              'Rotate with no grace? Deliveries stop verifying until your receiver has the new secret.',
            )
          )
            return;
          act(async () => {
            const rotated = await api.rotateSecret(endpointId, grace);
            setSecret(rotated.secret);
            return rotated.previous_secret_expires_at
              ? `Secret rotated. The previous secret keeps signing X-Service-Signature until ${new Date(
                  rotated.previous_secret_expires_at,
                ).toLocaleString()}: give your receiver both secrets now, and remove the old one after that.`
              : 'Secret rotated: the next attempt is signed with the new one.';
          });
        }}
      >
        Rotate secret
      </button>
      {secret && (
        <p class="secret-shown">
          Secret: <code class="secret">{secret}</code> <CopyButton text={secret} what="secret" />
        </p>
      )}
    </>
  );
}
