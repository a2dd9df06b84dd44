"""What every layer shares: errors, hints, names, severity, text formatting, files, static charts."""
