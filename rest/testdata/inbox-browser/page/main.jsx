// A customer's page with the platform's own <Inbox />, pointed at this server: its API
// and its socket. What the integrator's backend computed (the application identifier,
// the subscriber and its HMAC) and the server's address arrive in the URL's fragment.
// The bell is drawn with the component's renderBell, so the badge shows the count.
// <Inbox /> of @novu/react 3.19.2 passes backendUrl, not apiUrl, to the client.

import { Inbox } from '@novu/react';
import { createRoot } from 'react-dom/client';

const options = JSON.parse(decodeURIComponent(location.hash.slice(1)));

function Badge({ count }) {
  return (
    <span role="status" aria-label={`${count.total} unread`} data-testid="badge">
      {count.total}
    </span>
  );
}

createRoot(document.getElementById('root')).render(
  <Inbox
    applicationIdentifier={options.applicationIdentifier}
    subscriber={options.subscriberId}
    subscriberHash={options.subscriberHash}
    backendUrl={options.apiUrl}
    socketUrl={options.socketUrl}
    socketOptions={{ socketType: 'cloud' }}
    renderBell={(count) => <Badge count={count} />}
  />,
);
