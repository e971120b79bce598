// A client-side router: this path has no route, so the app shows its not-found view.
document.addEventListener("DOMContentLoaded", function () {
  var routes = {"/": "Home"};
  if (!routes[location.pathname]) {
    document.title = "Page not found";
    document.getElementById("root").innerHTML = "<h1>Page not found</h1><p>Sorry, we could not find that page.</p>";
  }
});
