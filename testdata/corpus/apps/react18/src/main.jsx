import React from 'react';
import { createRoot, hydrateRoot } from 'react-dom/client';
import { App } from './App.jsx';

const root = document.getElementById('root');
const props = { path: window.location.pathname, origin: window.location.origin, initial: window.__INITIAL_DATA__ };
if (root.hasChildNodes()) {
  hydrateRoot(root, <App {...props} />);
} else {
  createRoot(root).render(<App {...props} />);
}
