import { createElement, useEffect, useSyncExternalStore } from 'react';

// The app's own router: the path is a store; links push, redirects replace.
const listeners = new Set();
let current = typeof window === 'undefined' ? '/' : window.location.pathname;

function emit() {
  listeners.forEach((f) => f());
}

function subscribe(f) {
  listeners.add(f);
  const onPop = () => {
    current = window.location.pathname;
    emit();
  };
  window.addEventListener('popstate', onPop);
  return () => {
    listeners.delete(f);
    window.removeEventListener('popstate', onPop);
  };
}

export function navigate(to, { replace = false } = {}) {
  if (replace) {
    window.history.replaceState(null, '', to);
  } else {
    window.history.pushState(null, '', to);
  }
  current = to;
  emit();
}

export function usePath(initial) {
  return useSyncExternalStore(subscribe, () => current, () => initial);
}

export function Link({ to, children }) {
  const onClick = (e) => {
    e.preventDefault();
    navigate(to);
  };
  return createElement('a', { href: to, onClick }, children);
}

export function Redirect({ to }) {
  useEffect(() => {
    navigate(to, { replace: true });
  }, [to]);
  return null;
}
