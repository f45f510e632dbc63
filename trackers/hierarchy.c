/* hierarchy.c: being written */
