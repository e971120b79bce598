import { hydrate, mount } from 'svelte';
import App from './App.svelte';

const target = document.getElementById('svelte');
const props = { origin: window.location.origin, initial: window.__INITIAL_DATA__ || null };
if (target.firstElementChild) {
  hydrate(App, { target, props });
} else {
  mount(App, { target, props });
}
