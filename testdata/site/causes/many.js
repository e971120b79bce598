// Ten thousand insertions into the document, one at a time.
var list = document.getElementById("list");
for (var i = 0; i < 10000; i++) {
  var item = document.createElement("span");
  item.textContent = "item" + i + " ";
  list.appendChild(item);
}
