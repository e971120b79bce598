import { render as litRender } from '@lit-labs/ssr';
import { collectResult } from '@lit-labs/ssr/lib/render-result.js';
import { html } from 'lit';
import { heads, itemList, kind, organization } from './shop-app.js';

const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;');

// render answers one path with @lit-labs/ssr: declarative shadow DOM.
export async function render(path, ctx) {
  const k = kind(path);
  const data = k === 'products' ? ctx.data : null;
  let head = { ...heads.notFound };
  let ld = null;
  if (k === 'home') {
    head = { ...heads.home, canonical: `${ctx.origin}/` };
    ld = organization(ctx.origin);
  } else if (k === 'products') {
    head = { title: data.site.title, description: data.site.description, canonical: `${ctx.origin}/products` };
    ld = itemList(ctx.origin, data.products);
  } else if (k === 'redirect') {
    head = { title: 'Kettle & Co.', description: '' };
  }
  const body = await collectResult(litRender(html`<shop-app .path=${path} .origin=${ctx.origin} .data=${data}></shop-app>`));
  const page = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(head.title)}</title>
${head.description ? `<meta name="description" content="${esc(head.description)}">\n` : ''}${head.canonical ? `<link rel="canonical" href="${esc(head.canonical)}">\n` : ''}${ld ? `<script type="application/ld+json">${JSON.stringify(ld).replace(/</g, '\\u003c')}</script>\n` : ''}<script type="module" src="${ctx.assets.shop}"></script>
</head>
<body>
${body}
<script>window.__INITIAL_DATA__ = ${JSON.stringify(data).replace(/</g, '\\u003c')};</script>
</body>
</html>`;
  return { status: k === 'not-found' ? 404 : 200, html: page };
}
