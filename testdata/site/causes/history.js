// Moves the address to the app's own path for this view.
history.replaceState({}, "", "/catalogue/spring");
