// Injected by loader.js.
document.title = "Seed trays | Shop";
