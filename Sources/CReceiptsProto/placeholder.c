int creceiptsproto_placeholder(void) { return 0; }
