import { computed, h, onMounted, reactive } from 'vue';
import { useHead } from './head.js';

// JsonLd is a structured-data block (templates may not hold <script>).
const JsonLd = (props) => h('script', { type: 'application/ld+json', innerHTML: props.data });
JsonLd.props = ['data'];

const origin = () => (typeof window === 'undefined' ? globalThis.__ORIGIN__ : window.location.origin);

export const Home = {
  setup() {
    useHead(() => ({
      title: 'Kettle & Co. | Kitchen tools that last',
      description: 'Kettles, teapots, pans and knives made by hand in a small workshop and repaired for free for ten years.',
      canonical: `${origin()}/`,
    }));
    const ld = JSON.stringify({ '@context': 'https://schema.org', '@type': 'Organization', name: 'Kettle & Co.', url: `${origin()}/` });
    return { ld };
  },
  components: { JsonLd },
  template: `
    <h1>Kitchen tools that last</h1>
    <p>We make kettles, teapots, pans and knives in a small workshop by the river. Everything we sell is
      repaired for free for ten years, and every order ships in plain paper without plastic.</p>
    <p>See <router-link to="/products">all our products</router-link>, or write to us for advice on choosing a
      kettle for your stove.</p>
    <json-ld :data="ld"></json-ld>`,
};

export const Products = {
  setup() {
    const initial = typeof window === 'undefined' ? globalThis.__DATA__ : window.__INITIAL_DATA__;
    const state = reactive({ site: initial ? initial.site : null, products: initial ? initial.products : [] });
    onMounted(async () => {
      if (state.site) {
        return;
      }
      const site = await fetch('/api/site.json').then((r) => r.json());
      state.site = site;
      const list = await fetch('/api/products.json').then((r) => r.json());
      state.products = list.products;
    });
    useHead(() => state.site && { title: state.site.title, description: state.site.description, canonical: `${origin()}/products` });
    const ld = computed(() => JSON.stringify({
      '@context': 'https://schema.org',
      '@type': 'ItemList',
      itemListElement: state.products.map((p, i) => ({ '@type': 'ListItem', position: i + 1, name: p.name, url: `${origin()}/products/${p.slug}` })),
    }));
    return { state, ld };
  },
  components: { JsonLd },
  template: `
    <p v-if="!state.products.length">Loading products…</p>
    <template v-else>
      <h1>Our products</h1>
      <ul>
        <li v-for="p in state.products" :key="p.slug">
          <router-link :to="'/products/' + p.slug">{{ p.name }}</router-link>: {{ p.text }} <span>{{ p.price }} euros</span>
        </li>
      </ul>
      <json-ld :data="ld"></json-ld>
    </template>`,
};

export const NotFound = {
  setup() {
    useHead(() => ({ title: 'Page not found | Kettle & Co.', description: 'There is no page at this address.' }));
  },
  template: `
    <h1>Page not found</h1>
    <p>We could not find that page. <router-link to="/products">Browse our products</router-link> instead.</p>`,
};
