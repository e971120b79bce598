import { useEffect } from 'react';

// useHead writes the page's title, description and canonical into <head>.
export function useHead({ title, description, canonical }) {
  useEffect(() => {
    document.title = title;
    setMeta('description', description);
    let link = document.head.querySelector('link[rel="canonical"]');
    if (canonical) {
      if (!link) {
        link = document.createElement('link');
        link.setAttribute('rel', 'canonical');
        document.head.appendChild(link);
      }
      link.setAttribute('href', canonical);
    } else if (link) {
      link.remove();
    }
  }, [title, description, canonical]);
}

function setMeta(name, content) {
  let meta = document.head.querySelector(`meta[name="${name}"]`);
  if (!meta) {
    meta = document.createElement('meta');
    meta.setAttribute('name', name);
    document.head.appendChild(meta);
  }
  meta.setAttribute('content', content);
}

// heads are the head fields of each route, for the server and the browser.
export const heads = {
  '/': {
    title: 'Kettle & Co. | Kitchen tools that last',
    description: 'Kettles, teapots, pans and knives made by hand in a small workshop and repaired for free for ten years.',
  },
  notFound: { title: 'Page not found | Kettle & Co.', description: 'There is no page at this address.' },
};
