// Sets the language of the page, and nothing else.
document.documentElement.lang = "en";
