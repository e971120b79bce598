// Document is the whole page, rendered on the server and hydrated in the
// browser; boot carries the bundle's address and the route's data.
export function Document({ boot, children }) {
  const json = JSON.stringify(boot).replace(/</g, '\\u003c');
  return (
    <html lang="en">
      <head>
        <meta charSet="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <script type="module" src={boot.main} />
      </head>
      <body>
        <div id="root">{children}</div>
        <script id="boot" type="application/json" dangerouslySetInnerHTML={{ __html: json }} />
      </body>
    </html>
  );
}
