import { h } from 'preact';
import { renderToString } from 'preact-render-to-string';
import { App, heads, kind } from './app.js';

const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;');

// render answers one path with preact-render-to-string.
export function render(path, ctx) {
  const k = kind(path);
  const initial = k === 'products' ? ctx.data : null;
  let head = { ...heads.notFound };
  if (k === 'home') {
    head = { ...heads.home, canonical: `${ctx.origin}/` };
  } else if (k === 'products') {
    head = { title: ctx.data.site.title, description: ctx.data.site.description, canonical: `${ctx.origin}/products` };
  } else if (k === 'redirect') {
    head = { title: 'Kettle & Co.', description: '' };
  }
  const body = renderToString(h(App, { path, origin: ctx.origin, initial }));
  const html = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(head.title)}</title>
${head.description ? `<meta name="description" content="${esc(head.description)}">\n` : ''}${head.canonical ? `<link rel="canonical" href="${esc(head.canonical)}">\n` : ''}<script type="module" src="${ctx.assets.app}"></script>
</head>
<body>
<div id="app">${body}</div>
<script>window.__INITIAL_DATA__ = ${JSON.stringify(initial).replace(/</g, '\\u003c')};</script>
</body>
</html>`;
  return { status: k === 'not-found' ? 404 : 200, html };
}
