// The default theme, with a content column wide enough for the shell lines the pages show.
import DefaultTheme from 'vitepress/theme';
import './wide-content.css';

export default DefaultTheme;
