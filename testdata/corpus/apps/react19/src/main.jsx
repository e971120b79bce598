import { createRoot, hydrateRoot } from 'react-dom/client';
import { BrowserRouter } from 'react-router';
import { App } from './App.jsx';
import { Document } from './Document.jsx';

const boot = document.getElementById('boot');
if (boot) {
  const state = JSON.parse(boot.textContent);
  hydrateRoot(
    document,
    <Document boot={state}>
      <BrowserRouter>
        <App initial={state.data} />
      </BrowserRouter>
    </Document>,
  );
} else {
  createRoot(document.getElementById('root')).render(
    <BrowserRouter>
      <App />
    </BrowserRouter>,
  );
}
