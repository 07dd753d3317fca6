import { useEffect, useState } from 'preact/hooks';
import { api } from './api.js';
import { Deliveries } from './deliveries.js';
import { DeliveryDetailView } from './delivery-detail.js';
import { Endpoints } from './endpoints.js';
import { ReceiverPanel } from './receiver-panel.js';
import { SignIn } from './sign-in.js';

type View = { name: 'endpoints' } | { name: 'log'; endpointId?: string } | { name: 'delivery'; id: string };

export function App() {
  const [account, setAccount] = useState<{ id: string; name: string } | null | undefined>(undefined);
  const [view, setView] = useState<View>({ name: 'endpoints' });
  useEffect(() => {
    api.session().then(
      (s) => setAccount(s.account),
      () => setAccount(null),
    );
  }, []);
  if (account === undefined) return <p>Loading…</p>;
  if (account === null) return <SignIn onSignedIn={setAccount} />;
  return (
    <div class="app">
      <header>
        <h1>linkhooks</h1>
        <nav aria-label="Sections">
          <button
            type="button"
            aria-current={view.name === 'endpoints'}
            onClick={() => setView({ name: 'endpoints' })}
          >
            Endpoints
          </button>
          <button type="button" aria-current={view.name === 'log'} onClick={() => setView({ name: 'log' })}>
            Delivery log
          </button>
        </nav>
        <span class="account">{account.name}</span>
        <button type="button" onClick={() => api.signOut().then(() => setAccount(null))}>
          Sign out
        </button>
      </header>
      <main>
        {view.name === 'endpoints' && (
          <>
            <Endpoints onShowLog={(endpointId) => setView({ name: 'log', endpointId })} />
            <ReceiverPanel />
          </>
        )}
        {view.name === 'log' && (
          <Deliveries
            {...(view.endpointId ? { endpointId: view.endpointId } : {})}
            onOpen={(id) => setView({ name: 'delivery', id })}
          />
        )}
        {view.name === 'delivery' && (
          <DeliveryDetailView id={view.id} onBack={() => setView({ name: 'log' })} />
        )}
      </main>
    </div>
  );
}
