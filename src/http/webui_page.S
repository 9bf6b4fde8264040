/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The web view's page, built by `make` into $(BUILD)/web/index.html and linked in as read-only
 * data. Without WEBUI_PAGE (the page was not built) the blob is empty and webui.c says so.
 */
	.section .rodata
	.balign 16
	.global webui_page_start
	.type webui_page_start, @object
webui_page_start:
#ifdef WEBUI_PAGE
	.incbin WEBUI_PAGE
#endif
webui_page_end:
	.byte 0

	/* The length as data: C may not compare the addresses of two distinct objects. */
	.balign 8
	.global webui_page_size
	.type webui_page_size, @object
webui_page_size:
	.quad webui_page_end - webui_page_start

	.section .note.GNU-stack, "", @progbits
