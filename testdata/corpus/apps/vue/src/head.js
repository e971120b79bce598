import { watchEffect, useSSRContext } from 'vue';

// useHead keeps the page's head fields: on the server it hands them to the
// renderer, in the browser it writes them into <head>.
export function useHead(get) {
  if (typeof window === 'undefined') {
    const ctx = useSSRContext();
    ctx.head = get();
    return;
  }
  watchEffect(() => {
    const h = get();
    if (!h) {
      return;
    }
    document.title = h.title;
    let meta = document.querySelector('meta[name="description"]');
    if (!meta) {
      meta = document.createElement('meta');
      meta.name = 'description';
      document.head.append(meta);
    }
    meta.content = h.description;
    let link = document.querySelector('link[rel="canonical"]');
    if (h.canonical) {
      if (!link) {
        link = document.createElement('link');
        link.rel = 'canonical';
        document.head.append(link);
      }
      link.href = h.canonical;
    } else if (link) {
      link.remove();
    }
  });
}
