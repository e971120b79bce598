fetch('/rec/data.json').then(function (r) { return r.json(); }).then(function (d) {
  document.getElementById('late').textContent = d.text;
});
