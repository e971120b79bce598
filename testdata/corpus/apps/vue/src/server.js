import { createSSRApp } from 'vue';
import { renderToString } from 'vue/server-renderer';
import { createMemoryHistory, createRouter } from 'vue-router';
import { App, routes } from './app.js';

const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;');

// render answers one path: the app rendered by Vue's server renderer, the
// head its pages declared, the data for hydration.
export async function render(path, ctx) {
  globalThis.__ORIGIN__ = ctx.origin;
  globalThis.__DATA__ = path === '/products' ? ctx.data : null;
  const app = createSSRApp(App);
  const router = createRouter({ history: createMemoryHistory(), routes });
  app.use(router);
  await router.push(path);
  await router.isReady();
  const ssr = {};
  const body = await renderToString(app, ssr);
  const head = ssr.head || { title: 'Kettle & Co.' };
  const notFound = router.currentRoute.value.meta.notFound === true;
  const data = JSON.stringify(globalThis.__DATA__).replace(/</g, '\\u003c');
  const html = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(head.title)}</title>
${head.description ? `<meta name="description" content="${esc(head.description)}">\n` : ''}${head.canonical ? `<link rel="canonical" href="${esc(head.canonical)}">\n` : ''}<script type="module" src="${ctx.assets.app}"></script>
</head>
<body>
<div id="app" data-server-rendered>${body}</div>
<script>window.__INITIAL_DATA__ = ${data};</script>
</body>
</html>`;
  return { status: notFound ? 404 : 200, html };
}
