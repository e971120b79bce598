import React from 'react';
import { renderToString } from 'react-dom/server';
import { App, route } from './App.jsx';
import { heads } from './head.js';

const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;');

// render answers one path as the app's Express server would: the head from
// the route, the body from react-dom/server, the data for hydration.
export function render(path, ctx) {
  const kind = route(path);
  const initial = kind === 'products' ? ctx.data : null;
  let head = kind === 'home' ? { ...heads['/'], canonical: `${ctx.origin}/` } : heads.notFound;
  if (kind === 'products') {
    head = { title: ctx.data.site.title, description: ctx.data.site.description, canonical: `${ctx.origin}/products` };
  }
  if (kind === 'old-products') {
    head = { title: 'Kettle & Co.', description: '' };
  }
  const body = renderToString(<App path={path} origin={ctx.origin} initial={initial} />);
  const data = JSON.stringify(initial).replace(/</g, '\\u003c');
  const html = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(head.title)}</title>
${head.description ? `<meta name="description" content="${esc(head.description)}">\n` : ''}${head.canonical ? `<link rel="canonical" href="${esc(head.canonical)}">\n` : ''}<script src="/vendor/react.production.min.js" defer></script>
<script src="/vendor/react-dom.production.min.js" defer></script>
<script src="${ctx.assets.app}" defer></script>
</head>
<body>
<div id="root">${body}</div>
<script>window.__INITIAL_DATA__ = ${data};</script>
</body>
</html>`;
  return { status: kind === 'not-found' ? 404 : 200, html };
}
