import '@lit-labs/ssr-client/lit-element-hydrate-support.js';
import './shop-app.js';
