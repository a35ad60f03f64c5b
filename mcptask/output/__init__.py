"""Everything mcptask prints: output modes, tables, the watch views, the plain-call view, forms,
jq.
"""
