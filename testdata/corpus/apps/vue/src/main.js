import { createApp, createSSRApp } from 'vue';
import { createRouter, createWebHistory } from 'vue-router';
import { App, routes } from './app.js';

const el = document.getElementById('app');
const app = el.hasAttribute('data-server-rendered') ? createSSRApp(App) : createApp(App);
const router = createRouter({ history: createWebHistory(), routes });
app.use(router);
router.isReady().then(() => app.mount(el));
