import { useEffect, useState } from 'preact/hooks';
import { api, onSignedOut } from './api.js';
import { Deliveries } from './deliveries.js';
import { DeliveryDetailView } from './delivery-detail.js';
import { EndpointPage } from './endpoint-page.js';
import { Endpoints } from './endpoints.js';
import { linkProps, useView } from './navigation.js';
import { ReceiverPanel } from './receiver-panel.js';
import { SignIn } from './sign-in.js';

export function App() {
  const [account, setAccount] = useState<{ id: string; name: string } | null | undefined>(undefined);
  const view = useView();
  useEffect(() => {
    api.session().then(
      (s) => setAccount(s.account),
      () => setAccount(null),
    );
    // The session can end under an open page (its key revoked): the sign-in takes its place.
    return onSignedOut(() => setAccount(null));
  }, []);
  if (account === undefined) return <p>Loading…</p>;
  if (account === null) return <SignIn onSignedIn={setAccount} />;
  const section = view.name === 'endpoints' || view.name === 'endpoint' ? 'endpoints' : 'log';
  return (
    <div class="app">
      <header>
        <h1>linkhooks</h1>
        <nav aria-label="Sections">
          <a
            {...linkProps({ name: 'endpoints' })}
            aria-current={section === 'endpoints' ? 'page' : undefined}
          >
            Endpoints
          </a>
          <a
            {...linkProps({ name: 'log', filters: {} })}
            aria-current={section === 'log' ? 'page' : undefined}
          >
            Delivery log
          </a>
        </nav>
        <span class="account">{account.name}</span>
        <button type="button" onClick={() => api.signOut().then(() => setAccount(null))}>
          Sign out
        </button>
      </header>
      <main>
        {view.name === 'endpoints' && (
          <>
            <Endpoints />
            <ReceiverPanel />
          </>
        )}
        {view.name === 'endpoint' && <EndpointPage key={view.id} id={view.id} />}
        {view.name === 'log' && <Deliveries filters={view.filters} />}
        {view.name === 'delivery' && <DeliveryDetailView key={view.id} id={view.id} />}
      </main>
    </div>
  );
}
