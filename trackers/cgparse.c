/* cgparse.c: being written */
