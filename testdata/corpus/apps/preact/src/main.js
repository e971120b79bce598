import { h, hydrate, render } from 'preact';
import { App } from './app.js';

const el = document.getElementById('app');
const props = { path: window.location.pathname, origin: window.location.origin, initial: window.__INITIAL_DATA__ || null };
if (el.firstElementChild) {
  hydrate(h(App, props), el);
} else {
  render(h(App, props), el);
}
