import { useState } from 'preact/hooks';
import { api, type Endpoint, type EndpointInput, EVENTS } from './api.js';
import { CopyButton } from './copy-button.js';
import { linkProps } from './navigation.js';
import { SecretActions } from './secret-actions.js';
import { usePolling } from './use-polling.js';

const STATUS_LABELS = { active: 'Enabled', paused: 'Paused', disabled: 'Disabled' } as const;

function EndpointForm({
  initial,
  onSave,
  onCancel,
}: {
  initial?: Endpoint;
  onSave: (input: EndpointInput) => Promise<void>;
  onCancel?: () => void;
}) {
  const [url, setUrl] = useState(initial?.url ?? '');
  const [events, setEvents] = useState<string[]>(initial?.events ?? ['click', 'conversion']);
  const [description, setDescription] = useState(initial?.description ?? '');
  const [standard, setStandard] = useState(initial?.standard_webhooks ?? false);
  const [error, setError] = useState<string | null>(null);
  const prefix = initial ? `edit-${initial.id}` : 'new';
  const toggle = (name: string) =>
    setEvents((current) => (current.includes(name) ? current.filter((e) => e !== name) : [...current, name]));
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      await onSave({ url, events, description, standard_webhooks: standard });
      if (!initial) {
        // Created: the form starts again, so a second click does not make the same endpoint twice.
        setUrl('');
        setDescription('');
        setEvents(['click', 'conversion']);
        setStandard(false);
      }
    } catch (err) {
      setError((err as Error).message);
    }
  };
  return (
    <form class="endpoint-form" onSubmit={submit} aria-label={initial ? 'Edit endpoint' : 'New endpoint'}>
      <label for={`${prefix}-url`}>HTTPS URL</label>
      <input
        id={`${prefix}-url`}
        type="url"
        required
        value={url}
        onInput={(e) => setUrl((e.target as HTMLInputElement).value)}
      />
      <label for={`${prefix}-description`}>Description</label>
      <input
        id={`${prefix}-description`}
        value={description}
        onInput={(e) => setDescription((e.target as HTMLInputElement).value)}
      />
      <fieldset>
        <legend>Events</legend>
        {EVENTS.map((name) => (
          <label key={name} class="check">
            <input type="checkbox" checked={events.includes(name)} onChange={() => toggle(name)} /> {name}
          </label>
        ))}
      </fieldset>
      <label class="check">
        <input
          type="checkbox"
          data-field="standard_webhooks"
          checked={standard}
          onChange={() => setStandard(!standard)}
        />{' '}
        Standard Webhooks headers
      </label>
      <button type="submit">{initial ? 'Save' : 'Create endpoint'}</button>
      {onCancel && (
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      )}
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
    </form>
  );
}

/** An endpoint's settings and state with its actions; on its own page, `children` adds more. */
export function EndpointRow({
  endpoint,
  onChanged,
  children,
}: {
  endpoint: Endpoint;
  onChanged: () => void;
  children?: preact.ComponentChildren;
}) {
  const [replay, setReplay] = useState(true);
  const [editing, setEditing] = useState(false);
  const [note, setNote] = useState<string | null>(null);
  const act = async (work: () => Promise<string | undefined>) => {
    try {
      const message = await work();
      setNote(message || null);
      onChanged();
    } catch (err) {
      setNote((err as Error).message);
    }
  };
  return (
    <li class={`endpoint ${endpoint.status}`} data-endpoint={endpoint.id}>
      <div class="endpoint-head">
        <a class="url" {...linkProps({ name: 'endpoint', id: endpoint.id })}>
          {endpoint.url}
        </a>
        <CopyButton text={endpoint.url} what="URL" />
        <span class="status" data-status={endpoint.status}>
          {STATUS_LABELS[endpoint.status] ?? endpoint.status}
        </span>
      </div>
      {endpoint.description && <p class="description">{endpoint.description}</p>}
      <dl>
        <dt>Id</dt>
        <dd>
          <code class="id">{endpoint.id}</code> <CopyButton text={endpoint.id} what="endpoint id" />
        </dd>
        <dt>Events</dt>
        <dd>{endpoint.events.join(', ')}</dd>
        <dt>Consecutive failures</dt>
        <dd class="failures">{endpoint.consecutive_failures}</dd>
        <dt>Standard Webhooks</dt>
        <dd class="standard-webhooks">{endpoint.standard_webhooks ? 'on' : 'off'}</dd>
        {endpoint.previous_secret_expires_at && (
          <>
            <dt>Previous secret</dt>
            <dd class="previous-secret">
              still signing until {new Date(endpoint.previous_secret_expires_at).toLocaleString()}
            </dd>
          </>
        )}
        {endpoint.paused && endpoint.paused_at && (
          <>
            <dt>Paused</dt>
            <dd class="paused-since">
              since {new Date(endpoint.paused_at).toLocaleString()}: deliveries wait, unattempted, until you
              resume
            </dd>
          </>
        )}
        {!endpoint.enabled && (
          <>
            <dt>Disabled</dt>
            <dd class="disabled-reason">
              {endpoint.disabled_reason === 'consecutive_failures'
                ? '10 deliveries in a row failed'
                : endpoint.disabled_reason === 'gone'
                  ? 'the receiver answered 410 Gone'
                  : endpoint.disabled_reason}{' '}
              {endpoint.disabled_at && `at ${new Date(endpoint.disabled_at).toLocaleString()}`}
            </dd>
          </>
        )}
      </dl>
      <div class="actions">
        <a class="button" {...linkProps({ name: 'log', filters: { endpoint: endpoint.id } })}>
          Delivery log
        </a>
        <SecretActions endpointId={endpoint.id} act={act} />
        <button
          type="button"
          disabled={!endpoint.enabled}
          onClick={() =>
            act(async () => {
              await api.sendTest(endpoint.id);
              return 'Test event sent.';
            })
          }
        >
          Send test event
        </button>
        {!endpoint.enabled && (
          <>
            <label class="check">
              <input type="checkbox" checked={replay} onChange={() => setReplay(!replay)} /> Replay skipped
              events
            </label>
            <button
              type="button"
              onClick={() =>
                act(async () => {
                  const r = await api.enable(endpoint.id, replay);
                  return `Re-enabled: ${r.resumed} held resumed, ${r.replayed} skipped replayed.`;
                })
              }
            >
              Re-enable
            </button>
          </>
        )}
        <button type="button" onClick={() => setEditing(!editing)}>
          Edit
        </button>
        <button
          type="button"
          class="danger"
          onClick={() => {
            if (confirm(`Delete ${endpoint.url}? Its delivery log goes too.`))
              act(async () => {
                await api.deleteEndpoint(endpoint.id);
                return undefined;
              });
          }}
        >
          Delete
        </button>
      </div>
      {note && (
        <p role="status" class="note">
          {note}
        </p>
      )}
      {children}
      {editing && (
        <EndpointForm
          initial={endpoint}
          onCancel={() => setEditing(false)}
          onSave={async (input) => {
            await api.updateEndpoint(endpoint.id, input);
            setEditing(false);
            onChanged();
          }}
        />
      )}
    </li>
  );
}

export function Endpoints() {
  const [endpoints, setEndpoints] = useState<Endpoint[] | null>(null);
  const [created, setCreated] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  // Status and failure counts change as deliveries land: keep them current.
  const reload = usePolling(api.endpoints, setEndpoints, (err) => setError(err.message), 2000, []);
  return (
    <section aria-labelledby="endpoints-title">
      <h2 id="endpoints-title">Endpoints</h2>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {endpoints === null ? (
        <p>Loading…</p>
      ) : endpoints.length === 0 ? (
        <p>No endpoint yet.</p>
      ) : (
        <ul class="endpoints">
          {endpoints.map((e) => (
            <EndpointRow key={e.id} endpoint={e} onChanged={reload} />
          ))}
        </ul>
      )}
      <h3>New endpoint</h3>
      <EndpointForm
        onSave={async (input) => {
          const endpoint = await api.createEndpoint(input);
          setCreated(endpoint.secret);
          await reload();
        }}
      />
      {created && (
        <p role="status" class="note created">
          Created. Its secret, to verify signatures: <code class="secret">{created}</code>{' '}
          <CopyButton text={created} what="secret" />
        </p>
      )}
    </section>
  );
}
