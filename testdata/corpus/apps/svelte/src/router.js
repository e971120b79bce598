import { writable } from 'svelte/store';

// path is the app's current path; go moves it (pushing or replacing history).
export const path = writable(typeof window === 'undefined' ? '/' : window.location.pathname);

export function go(to, replace = false) {
  window.history[replace ? 'replaceState' : 'pushState'](null, '', to);
  path.set(to);
}

export function link(node) {
  const click = (e) => {
    e.preventDefault();
    go(node.getAttribute('href'));
  };
  node.addEventListener('click', click);
  return { destroy: () => node.removeEventListener('click', click) };
}

if (typeof window !== 'undefined') {
  window.addEventListener('popstate', () => path.set(window.location.pathname));
}
