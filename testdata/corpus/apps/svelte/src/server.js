import { render as svelteRender } from 'svelte/server';
import App from './App.svelte';
import { path as current } from './router.js';

// render answers one path with svelte/server's render.
export function render(path, ctx) {
  current.set(path);
  const initial = path === '/products' ? ctx.data : null;
  const { head, body } = svelteRender(App, { props: { origin: ctx.origin, initial } });
  const known = ['/', '/products', '/old-products'].includes(path);
  const html = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${head}
<script type="module" src="${ctx.assets.app}"></script>
</head>
<body>
<div id="svelte">${body}</div>
<script>window.__INITIAL_DATA__ = ${JSON.stringify(initial).replace(/</g, '\\u003c')};</script>
</body>
</html>`;
  return { status: known ? 200 : 404, html };
}
