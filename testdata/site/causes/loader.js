// A loader that injects another script, as tag loaders do.
var s = document.createElement("script");
s.src = "/causes/late-title.js";
document.head.appendChild(s);
