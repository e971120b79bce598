import { createContext } from 'react';

// StatusContext carries the HTTP status the server should answer with.
export const StatusContext = createContext(null);

let base = typeof window === 'undefined' ? '' : window.location.origin;

export function setOrigin(origin) {
  base = origin;
}

export function origin() {
  return base;
}

// Seo renders the page's head fields; React 19 hoists them into <head>.
export function Seo({ title, description, path }) {
  return (
    <>
      <title>{title}</title>
      <meta name="description" content={description} />
      {path != null && <link rel="canonical" href={origin() + path} />}
    </>
  );
}

export function JsonLd({ data }) {
  const json = JSON.stringify(data).replace(/</g, '\\u003c');
  return <script type="application/ld+json" dangerouslySetInnerHTML={{ __html: json }} />;
}
