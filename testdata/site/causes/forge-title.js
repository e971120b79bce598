// The one script that writes the title.
document.title = "Forged page title, written by forge-title.js";
