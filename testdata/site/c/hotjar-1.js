// Placeholder for static.hotjar.com/c/hotjar-1.js: the render lane must never request it.
window.__lektaAnalyticsLoaded = "hotjar";
