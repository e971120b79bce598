// The one script that writes the title.
document.title = "Setter page title, written by setter-title.js";
