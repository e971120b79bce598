import { renderToString } from 'react-dom/server';
import { StaticRouter } from 'react-router';
import { App } from './App.jsx';
import { Document } from './Document.jsx';
import { StatusContext, setOrigin } from './Seo.jsx';

// render is the server's renderer: the whole document of one path.
export function render(path, ctx) {
  setOrigin(ctx.origin);
  const status = { code: 200 };
  const boot = { main: ctx.assets.main, data: path === '/products' ? ctx.data : null };
  const html = renderToString(
    <StatusContext.Provider value={status}>
      <Document boot={boot}>
        <StaticRouter location={path}>
          <App initial={boot.data} />
        </StaticRouter>
      </Document>
    </StatusContext.Provider>,
  );
  return { status: status.code, html: `<!DOCTYPE html>${html}` };
}
