// A bundle that sets the title, as a head manager does.
(function () {
  function setTitle(t) {
    document.title = t;
  }
  setTitle("Garden tools | Shop");
})();
