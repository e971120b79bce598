// Placeholder for www.google-analytics.com/analytics.js: the render lane must never request it.
window.__lektaAnalyticsLoaded = "google-analytics";
