import { Home, NotFound, Products } from './pages.js';

export const routes = [
  { path: '/', component: Home },
  { path: '/products', component: Products },
  { path: '/old-products', redirect: '/products' },
  { path: '/:rest(.*)*', component: NotFound, meta: { notFound: true } },
];

export const App = {
  template: `
    <header><nav><router-link to="/">Home</router-link> <router-link to="/products">Products</router-link></nav></header>
    <main><router-view></router-view></main>
    <footer><p>Kettle &amp; Co. is built with Vue and vue-router.</p></footer>`,
};
