import './shop-app.js';
