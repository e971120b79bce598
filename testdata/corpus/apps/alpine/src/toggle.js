// Care notes that open and close, on pages the server wrote.
document.addEventListener('alpine:init', () => {
  window.Alpine.data('notes', () => ({
    open: false,
    toggle() {
      this.open = !this.open;
    },
  }));
});
